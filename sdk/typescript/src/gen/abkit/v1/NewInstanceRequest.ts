// Original file: ../../proto/abkit/v1/abkit.proto


export interface NewInstanceRequest {
  'config_json'?: (Buffer | Uint8Array | string);
  'direction'?: (string);
}

export interface NewInstanceRequest__Output {
  'config_json': (Buffer);
  'direction': (string);
}
