// Original file: ../../proto/abkit/v1/abkit.proto


export interface NotifyRequest {
  'point'?: (string);
  'payload_json'?: (Buffer | Uint8Array | string);
}

export interface NotifyRequest__Output {
  'point': (string);
  'payload_json': (Buffer);
}
