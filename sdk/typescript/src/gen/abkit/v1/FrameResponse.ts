// Original file: ../../proto/abkit/v1/abkit.proto

import type { Action as _abkit_v1_Action, Action__Output as _abkit_v1_Action__Output } from '../../abkit/v1/Action';
import type { BodyWrite as _abkit_v1_BodyWrite, BodyWrite__Output as _abkit_v1_BodyWrite__Output } from '../../abkit/v1/BodyWrite';
import type { ExtensionValue as _abkit_v1_ExtensionValue, ExtensionValue__Output as _abkit_v1_ExtensionValue__Output } from '../../abkit/v1/ExtensionValue';
import type { HeaderDelta as _abkit_v1_HeaderDelta, HeaderDelta__Output as _abkit_v1_HeaderDelta__Output } from '../../abkit/v1/HeaderDelta';

export interface FrameResponse {
  'action'?: (_abkit_v1_Action | null);
  'writes'?: (_abkit_v1_BodyWrite)[];
  'extensions'?: (_abkit_v1_ExtensionValue)[];
  'error'?: (string);
  'panicked'?: (boolean);
  'request_header'?: (_abkit_v1_HeaderDelta | null);
  'response_header'?: (_abkit_v1_HeaderDelta | null);
  'identity_json'?: (Buffer | Uint8Array | string);
}

export interface FrameResponse__Output {
  'action': (_abkit_v1_Action__Output | null);
  'writes': (_abkit_v1_BodyWrite__Output)[];
  'extensions': (_abkit_v1_ExtensionValue__Output)[];
  'error': (string);
  'panicked': (boolean);
  'request_header': (_abkit_v1_HeaderDelta__Output | null);
  'response_header': (_abkit_v1_HeaderDelta__Output | null);
  'identity_json': (Buffer);
}
