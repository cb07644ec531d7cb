// Original file: ../../proto/abkit/v1/abkit.proto


export interface InterceptResponse {
  'decision'?: (string);
  'reason'?: (string);
  'replacement_json'?: (Buffer | Uint8Array | string);
  'error'?: (string);
}

export interface InterceptResponse__Output {
  'decision': (string);
  'reason': (string);
  'replacement_json': (Buffer);
  'error': (string);
}
