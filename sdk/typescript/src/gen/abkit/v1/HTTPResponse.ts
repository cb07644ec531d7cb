// Original file: ../../proto/abkit/v1/abkit.proto

import type { Header as _abkit_v1_Header, Header__Output as _abkit_v1_Header__Output } from '../../abkit/v1/Header';

export interface HTTPResponse {
  'status'?: (number);
  'header'?: (_abkit_v1_Header)[];
  'has_body'?: (boolean);
  'body'?: (Buffer | Uint8Array | string);
}

export interface HTTPResponse__Output {
  'status': (number);
  'header': (_abkit_v1_Header__Output)[];
  'has_body': (boolean);
  'body': (Buffer);
}
