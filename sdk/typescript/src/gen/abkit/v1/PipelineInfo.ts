// Original file: ../../proto/abkit/v1/abkit.proto

import type { Capabilities as _abkit_v1_Capabilities, Capabilities__Output as _abkit_v1_Capabilities__Output } from '../../abkit/v1/Capabilities';

export interface PipelineInfo {
  'capabilities'?: (_abkit_v1_Capabilities | null);
  'behaviours'?: (string)[];
  'config_schema_json'?: (Buffer | Uint8Array | string);
  'observed'?: (_abkit_v1_Capabilities)[];
  'probe_error'?: (string);
}

export interface PipelineInfo__Output {
  'capabilities': (_abkit_v1_Capabilities__Output | null);
  'behaviours': (string)[];
  'config_schema_json': (Buffer);
  'observed': (_abkit_v1_Capabilities__Output)[];
  'probe_error': (string);
}
