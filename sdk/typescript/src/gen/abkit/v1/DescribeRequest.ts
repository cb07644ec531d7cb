// Original file: ../../proto/abkit/v1/abkit.proto


export interface DescribeRequest {
}

export interface DescribeRequest__Output {
}
