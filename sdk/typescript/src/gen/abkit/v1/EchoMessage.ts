// Original file: ../../proto/abkit/v1/abkit.proto


export interface EchoMessage {
  'payload'?: (Buffer | Uint8Array | string);
}

export interface EchoMessage__Output {
  'payload': (Buffer);
}
