// Original file: ../../proto/abkit/v1/abkit.proto


export interface HookError {
  'kind'?: (string);
  'message'?: (string);
  'panicked'?: (boolean);
}

export interface HookError__Output {
  'kind': (string);
  'message': (string);
  'panicked': (boolean);
}
