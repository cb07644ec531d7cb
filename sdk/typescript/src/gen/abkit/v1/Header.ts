// Original file: ../../proto/abkit/v1/abkit.proto


export interface Header {
  'name'?: (string);
  'values'?: (string)[];
}

export interface Header__Output {
  'name': (string);
  'values': (string)[];
}
