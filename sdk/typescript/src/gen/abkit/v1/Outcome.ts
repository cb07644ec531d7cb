// Original file: ../../proto/abkit/v1/abkit.proto

import type { Long } from '@grpc/proto-loader';

export interface Outcome {
  'kind'?: (string);
  'status'?: (number);
  'denied_by'?: (string);
  'reason'?: (string);
  'duration_ns'?: (number | string | Long);
}

export interface Outcome__Output {
  'kind': (string);
  'status': (number);
  'denied_by': (string);
  'reason': (string);
  'duration_ns': (string);
}
