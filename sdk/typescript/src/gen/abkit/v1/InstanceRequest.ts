// Original file: ../../proto/abkit/v1/abkit.proto

import type { Long } from '@grpc/proto-loader';

export interface InstanceRequest {
  'instance'?: (number | string | Long);
}

export interface InstanceRequest__Output {
  'instance': (string);
}
