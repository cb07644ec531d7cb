// Original file: ../../proto/abkit/v1/abkit.proto


export interface ExtensionSpec {
  'key'?: (string);
  'writes'?: (boolean);
  'reads'?: (boolean);
  'optional'?: (boolean);
  'schema_json'?: (Buffer | Uint8Array | string);
  'description'?: (string);
}

export interface ExtensionSpec__Output {
  'key': (string);
  'writes': (boolean);
  'reads': (boolean);
  'optional': (boolean);
  'schema_json': (Buffer);
  'description': (string);
}
