// Original file: ../../proto/abkit/v1/abkit.proto

import type { Long } from '@grpc/proto-loader';

export interface HookSpec {
  'id'?: (string);
  'order'?: (number | string | Long);
  'policy'?: (string);
  'kind'?: (string);
  'index'?: (number);
}

export interface HookSpec__Output {
  'id': (string);
  'order': (string);
  'policy': (string);
  'kind': (string);
  'index': (number);
}
