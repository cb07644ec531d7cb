// Original file: ../../proto/abkit/v1/abkit.proto

import type { Header as _abkit_v1_Header, Header__Output as _abkit_v1_Header__Output } from '../../abkit/v1/Header';

export interface Rejection {
  'header'?: (_abkit_v1_Header)[];
  'has_body'?: (boolean);
  'body'?: (Buffer | Uint8Array | string);
  'content_type'?: (string);
}

export interface Rejection__Output {
  'header': (_abkit_v1_Header__Output)[];
  'has_body': (boolean);
  'body': (Buffer);
  'content_type': (string);
}
