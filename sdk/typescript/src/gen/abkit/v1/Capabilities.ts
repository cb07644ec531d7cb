// Original file: ../../proto/abkit/v1/abkit.proto


export interface Capabilities {
  'reads_body'?: (boolean);
  'writes_request_body'?: (boolean);
  'writes_response_body'?: (boolean);
  'requires'?: (string)[];
  'requires_any'?: (string)[];
  'description'?: (string);
  'name'?: (string);
}

export interface Capabilities__Output {
  'reads_body': (boolean);
  'writes_request_body': (boolean);
  'writes_response_body': (boolean);
  'requires': (string)[];
  'requires_any': (string)[];
  'description': (string);
  'name': (string);
}
