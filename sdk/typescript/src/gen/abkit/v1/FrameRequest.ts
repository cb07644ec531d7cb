// Original file: ../../proto/abkit/v1/abkit.proto

import type { HTTPResponse as _abkit_v1_HTTPResponse, HTTPResponse__Output as _abkit_v1_HTTPResponse__Output } from '../../abkit/v1/HTTPResponse';
import type { ExtensionValue as _abkit_v1_ExtensionValue, ExtensionValue__Output as _abkit_v1_ExtensionValue__Output } from '../../abkit/v1/ExtensionValue';
import type { Long } from '@grpc/proto-loader';

export interface FrameRequest {
  'instance'?: (number | string | Long);
  'exchange'?: (number | string | Long);
  'response'?: (_abkit_v1_HTTPResponse | null);
  'frame'?: (Buffer | Uint8Array | string);
  'last'?: (boolean);
  'extensions'?: (_abkit_v1_ExtensionValue)[];
  'final'?: (boolean);
  'ctx_err'?: (string);
  'deadline_unix_nano'?: (number | string | Long);
  'identity_json'?: (Buffer | Uint8Array | string);
}

export interface FrameRequest__Output {
  'instance': (string);
  'exchange': (string);
  'response': (_abkit_v1_HTTPResponse__Output | null);
  'frame': (Buffer);
  'last': (boolean);
  'extensions': (_abkit_v1_ExtensionValue__Output)[];
  'final': (boolean);
  'ctx_err': (string);
  'deadline_unix_nano': (string);
  'identity_json': (Buffer);
}
