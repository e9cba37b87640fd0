#!/bin/sh
# Compile and run the recorder: run.sh OUT.json RUNS CONFIGS SPEC.json...
# FLINK_LIB: the lib/ of flink-dist 2.3.0 (e.g. apache-flink-libraries 2.3.0's deps/lib).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
L=${FLINK_LIB:?set FLINK_LIB to flink-dist 2.3.0 lib/}
CP=$L/flink-dist-2.3.0.jar:$L/log4j-slf4j-impl-2.25.3.jar:$L/log4j-core-2.25.3.jar:$L/log4j-api-2.25.3.jar
CLASSES=${CLASSES:-/tmp/flowmagic-physical-recorder}
mkdir -p "$CLASSES"
javac -d "$CLASSES" -cp "$CP" "$HERE/PhysicalRecorder.java" "$HERE/Programs.java"
exec java -Dlog4j.configurationFile="$HERE/log4j2.properties" -cp "$CLASSES:$CP" PhysicalRecorder "$@"
