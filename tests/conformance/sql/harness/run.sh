#!/bin/sh
# Compile the recorder and record one case: run.sh CASE.sql DATA_DIR RAW_OUT.json OPTIONS_JSON
# FLINK_LIB: the lib/ of Flink 2.3.0 (apache-flink-libraries 2.3.0's deps/lib).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
L=${FLINK_LIB:?set FLINK_LIB to the lib/ of Flink 2.3.0}
CP=$(ls "$L"/*.jar | tr '\n' ':')
CLASSES=${CLASSES:-/tmp/flowmagic-sql-recorder}
mkdir -p "$CLASSES"
if [ ! -f "$CLASSES/SqlRecorder.class" ] || [ "$HERE/SqlRecorder.java" -nt "$CLASSES/SqlRecorder.class" ]; then
  javac -nowarn -d "$CLASSES" -cp "$CP" "$HERE/SqlRecorder.java"
fi
exec java -Xmx1g -Duser.timezone=UTC -Dlog4j.configurationFile="$HERE/log4j2.properties" -cp "$CLASSES:$CP" SqlRecorder "$@"
