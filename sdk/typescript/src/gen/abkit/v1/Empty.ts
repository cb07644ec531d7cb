// Original file: ../../proto/abkit/v1/abkit.proto


export interface Empty {
}

export interface Empty__Output {
}
