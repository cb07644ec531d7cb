// Original file: ../../proto/abkit/v1/abkit.proto

import type { HookError as _abkit_v1_HookError, HookError__Output as _abkit_v1_HookError__Output } from '../../abkit/v1/HookError';

export interface SubmitResponse {
  'submit_json'?: (Buffer | Uint8Array | string);
  'error'?: (_abkit_v1_HookError | null);
}

export interface SubmitResponse__Output {
  'submit_json': (Buffer);
  'error': (_abkit_v1_HookError__Output | null);
}
