// Original file: ../../proto/abkit/v1/abkit.proto


export interface InterceptRequest {
  'point'?: (string);
  'payload_json'?: (Buffer | Uint8Array | string);
}

export interface InterceptRequest__Output {
  'point': (string);
  'payload_json': (Buffer);
}
