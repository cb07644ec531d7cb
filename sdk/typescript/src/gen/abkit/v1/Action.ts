// Original file: ../../proto/abkit/v1/abkit.proto

import type { Rejection as _abkit_v1_Rejection, Rejection__Output as _abkit_v1_Rejection__Output } from '../../abkit/v1/Rejection';

export interface Action {
  'kind'?: (string);
  'status'?: (number);
  'reason'?: (string);
  'rejection'?: (_abkit_v1_Rejection | null);
}

export interface Action__Output {
  'kind': (string);
  'status': (number);
  'reason': (string);
  'rejection': (_abkit_v1_Rejection__Output | null);
}
