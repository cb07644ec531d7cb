// Original file: ../../proto/abkit/v1/abkit.proto


export interface Status {
  'error'?: (string);
}

export interface Status__Output {
  'error': (string);
}
