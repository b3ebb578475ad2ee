# Copies the system's onnx.proto (Debian's libonnx-dev: onnx 1.12, IR version 8) to OUT,
# adding the fields of IR versions 9 and 10 that the loader reads when the file lacks
# them (field numbers as in upstream onnx.proto): FunctionProto.attribute_proto (default
# values of a model-local function's attributes), FunctionProto.value_info and
# overload, NodeProto.overload. Run as: cmake -DIN=... -DOUT=... -P onnx_proto_patch.cmake
file(READ ${IN} proto)
if(NOT proto MATCHES "attribute_proto")
  string(REPLACE "  repeated string attribute = 6;"
"  repeated string attribute = 6;
  repeated AttributeProto attribute_proto = 11;
  repeated ValueInfoProto value_info = 12;
  optional string overload = 13;" proto "${proto}")
endif()
if(NOT proto MATCHES "overload = 8;")
  string(REGEX REPLACE "(  optional string domain = 7;[^\n]*)"
"\\1
  optional string overload = 8;" proto "${proto}")
endif()
file(WRITE ${OUT} "${proto}")
