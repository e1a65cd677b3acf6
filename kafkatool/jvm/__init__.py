"""One home for the JVM's behaviour that Kafka's output depends on.

Kafka's tools are Java and Scala programs: what they print depends on Java's lenient UTF-8
decoding, `String.hashCode` and int32 wrapping, `java.util.Random`, and the iteration order of
Java and Scala collections.  Every model of that behaviour lives in this package, checked against a
real JDK and scala-library where the tests can reach them.  It imports nothing else of kafkatool,
so every layer (`log/`, `ops/`, `cluster/`) may use it.
"""
