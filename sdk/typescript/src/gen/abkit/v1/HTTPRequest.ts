// Original file: ../../proto/abkit/v1/abkit.proto

import type { Header as _abkit_v1_Header, Header__Output as _abkit_v1_Header__Output } from '../../abkit/v1/Header';

export interface HTTPRequest {
  'method'?: (string);
  'url'?: (string);
  'header'?: (_abkit_v1_Header)[];
  'has_body'?: (boolean);
  'body'?: (Buffer | Uint8Array | string);
  'scheme'?: (string);
  'host'?: (string);
  'path'?: (string);
  'raw_query'?: (string);
  'remote_addr'?: (string);
}

export interface HTTPRequest__Output {
  'method': (string);
  'url': (string);
  'header': (_abkit_v1_Header__Output)[];
  'has_body': (boolean);
  'body': (Buffer);
  'scheme': (string);
  'host': (string);
  'path': (string);
  'raw_query': (string);
  'remote_addr': (string);
}
