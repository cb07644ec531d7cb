// Original file: ../../proto/abkit/v1/abkit.proto

import type { Header as _abkit_v1_Header, Header__Output as _abkit_v1_Header__Output } from '../../abkit/v1/Header';

export interface HeaderDelta {
  'set'?: (_abkit_v1_Header)[];
  'deleted'?: (string)[];
}

export interface HeaderDelta__Output {
  'set': (_abkit_v1_Header__Output)[];
  'deleted': (string)[];
}
