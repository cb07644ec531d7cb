// Original file: ../../proto/abkit/v1/abkit.proto


export interface Action {
  'kind'?: (string);
  'status'?: (number);
  'reason'?: (string);
}

export interface Action__Output {
  'kind': (string);
  'status': (number);
  'reason': (string);
}
