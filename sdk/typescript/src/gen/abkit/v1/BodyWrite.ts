// Original file: ../../proto/abkit/v1/abkit.proto


export interface BodyWrite {
  'response'?: (boolean);
  'body'?: (Buffer | Uint8Array | string);
  'applied'?: (boolean);
}

export interface BodyWrite__Output {
  'response': (boolean);
  'body': (Buffer);
  'applied': (boolean);
}
