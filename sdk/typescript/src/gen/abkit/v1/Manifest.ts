// Original file: ../../proto/abkit/v1/abkit.proto

import type { Long } from '@grpc/proto-loader';

export interface Manifest {
  'plugin_id'?: (string);
  'required'?: (boolean);
  'points'?: (string)[];
  'priority'?: (number);
  'slots'?: (string)[];
  'timeout_ns'?: (number | string | Long);
}

export interface Manifest__Output {
  'plugin_id': (string);
  'required': (boolean);
  'points': (string)[];
  'priority': (number);
  'slots': (string)[];
  'timeout_ns': (string);
}
