// Original file: ../../proto/abkit/v1/abkit.proto

import type { HookError as _abkit_v1_HookError, HookError__Output as _abkit_v1_HookError__Output } from '../../abkit/v1/HookError';

export interface ToolResponse {
  'decision_json'?: (Buffer | Uint8Array | string);
  'error'?: (_abkit_v1_HookError | null);
}

export interface ToolResponse__Output {
  'decision_json': (Buffer);
  'error': (_abkit_v1_HookError__Output | null);
}
