// Original file: ../../proto/abkit/v1/abkit.proto


export interface PartRequest {
  'hook'?: (number);
  'part_json'?: (Buffer | Uint8Array | string);
}

export interface PartRequest__Output {
  'hook': (number);
  'part_json': (Buffer);
}
