// Original file: ../../proto/abkit/v1/abkit.proto


export interface SubmitRequest {
  'hook'?: (number);
  'submit_json'?: (Buffer | Uint8Array | string);
}

export interface SubmitRequest__Output {
  'hook': (number);
  'submit_json': (Buffer);
}
