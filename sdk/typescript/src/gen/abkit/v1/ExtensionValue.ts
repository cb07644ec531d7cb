// Original file: ../../proto/abkit/v1/abkit.proto


export interface ExtensionValue {
  'key'?: (string);
  'json'?: (Buffer | Uint8Array | string);
  'removed'?: (boolean);
}

export interface ExtensionValue__Output {
  'key': (string);
  'json': (Buffer);
  'removed': (boolean);
}
