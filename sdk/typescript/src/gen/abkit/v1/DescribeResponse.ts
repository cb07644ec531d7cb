// Original file: ../../proto/abkit/v1/abkit.proto

import type { PipelineInfo as _abkit_v1_PipelineInfo, PipelineInfo__Output as _abkit_v1_PipelineInfo__Output } from '../../abkit/v1/PipelineInfo';
import type { Manifest as _abkit_v1_Manifest, Manifest__Output as _abkit_v1_Manifest__Output } from '../../abkit/v1/Manifest';
import type { HookSpec as _abkit_v1_HookSpec, HookSpec__Output as _abkit_v1_HookSpec__Output } from '../../abkit/v1/HookSpec';

export interface DescribeResponse {
  'name'?: (string);
  'description'?: (string);
  'version'?: (string);
  'families'?: (string)[];
  'pipeline'?: (_abkit_v1_PipelineInfo | null);
  'extension'?: (_abkit_v1_Manifest | null);
  'hooks'?: (_abkit_v1_HookSpec)[];
  'sdk'?: (string);
  'alternatives'?: ({[key: string]: string});
}

export interface DescribeResponse__Output {
  'name': (string);
  'description': (string);
  'version': (string);
  'families': (string)[];
  'pipeline': (_abkit_v1_PipelineInfo__Output | null);
  'extension': (_abkit_v1_Manifest__Output | null);
  'hooks': (_abkit_v1_HookSpec__Output)[];
  'sdk': (string);
  'alternatives': ({[key: string]: string});
}
