// Original file: ../../proto/abkit/v1/abkit.proto

import type { Long } from '@grpc/proto-loader';

export interface ReleaseRequest {
  'instance'?: (number | string | Long);
  'exchanges'?: (number | string | Long)[];
}

export interface ReleaseRequest__Output {
  'instance': (string);
  'exchanges': (string)[];
}
