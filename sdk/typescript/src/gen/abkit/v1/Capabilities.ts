// Original file: ../../proto/abkit/v1/abkit.proto

import type { ExtensionSpec as _abkit_v1_ExtensionSpec, ExtensionSpec__Output as _abkit_v1_ExtensionSpec__Output } from '../../abkit/v1/ExtensionSpec';

export interface Capabilities {
  'reads_body'?: (boolean);
  'writes_request_body'?: (boolean);
  'writes_response_body'?: (boolean);
  'requires'?: (string)[];
  'requires_any'?: (string)[];
  'description'?: (string);
  'name'?: (string);
  'extensions'?: (_abkit_v1_ExtensionSpec)[];
}

export interface Capabilities__Output {
  'reads_body': (boolean);
  'writes_request_body': (boolean);
  'writes_response_body': (boolean);
  'requires': (string)[];
  'requires_any': (string)[];
  'description': (string);
  'name': (string);
  'extensions': (_abkit_v1_ExtensionSpec__Output)[];
}
