// Original file: ../../proto/abkit/v1/abkit.proto

import type { Capabilities as _abkit_v1_Capabilities, Capabilities__Output as _abkit_v1_Capabilities__Output } from '../../abkit/v1/Capabilities';
import type { Long } from '@grpc/proto-loader';

export interface NewInstanceResponse {
  'instance'?: (number | string | Long);
  'capabilities'?: (_abkit_v1_Capabilities | null);
  'behaviours'?: (string)[];
  'error'?: (string);
}

export interface NewInstanceResponse__Output {
  'instance': (string);
  'capabilities': (_abkit_v1_Capabilities__Output | null);
  'behaviours': (string)[];
  'error': (string);
}
