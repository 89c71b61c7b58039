import PostgresNIO
import SpoorCollectorCore

/// A text column of a group's events as one binary `text[]` bind, written from the rows' bytes.
struct EventColumn: PostgresNonThrowingEncodable, PostgresDynamicTypeEncodable {
    enum Source {
        /// Each event's batch id.
        case batchID
        /// A text column of the row (a `NULL` span is a `NULL` element).
        case text(KeyPath<EventRows.Row, TextSpan>)
    }

    static var psqlType: PostgresDataType { .textArray }
    static var psqlFormat: PostgresFormat { .binary }

    let batches: [BatchRecord]
    let source: Source

    init(_ batches: [BatchRecord], _ source: Source) {
        self.batches = batches
        self.source = source
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        let count = batches.reduce(0) { $0 + $1.rows.count }
        writeArrayHeader(count: count, elementType: .text, into: &buffer)
        for batch in batches {
            let text = batch.rows.text
            for row in batch.rows.rows {
                switch source {
                case .batchID:
                    buffer.writeInteger(Int32(truncatingIfNeeded: batch.batchID.utf8.count))  // 32 hex digits
                    buffer.writeString(batch.batchID)
                case .text(let column):
                    let span = row[keyPath: column]
                    if span.isNull {
                        buffer.writeInteger(-1, as: Int32.self)
                    } else {
                        buffer.writeInteger(span.count)
                        buffer.writeBytes(text.bytes(span))
                    }
                }
            }
        }
    }
}

/// An `int4` column of a group's events as one binary `int4[]` bind.
struct EventIntColumn: PostgresNonThrowingEncodable, PostgresDynamicTypeEncodable {
    static var psqlType: PostgresDataType { .int4Array }
    static var psqlFormat: PostgresFormat { .binary }

    let batches: [BatchRecord]
    let column: KeyPath<EventRows.Row, Int32>

    init(_ batches: [BatchRecord], _ column: KeyPath<EventRows.Row, Int32>) {
        self.batches = batches
        self.column = column
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        writeArrayHeader(count: batches.reduce(0) { $0 + $1.rows.count }, elementType: .int4, into: &buffer)
        for batch in batches {
            for row in batch.rows.rows {
                buffer.writeInteger(4, as: Int32.self)
                buffer.writeInteger(row[keyPath: column])
            }
        }
    }
}

/// An `int8` column of a group's events as one binary `int8[]` bind.
struct EventBigintColumn: PostgresNonThrowingEncodable, PostgresDynamicTypeEncodable {
    static var psqlType: PostgresDataType { .int8Array }
    static var psqlFormat: PostgresFormat { .binary }

    let batches: [BatchRecord]
    let column: KeyPath<EventRows.Row, Int64>

    init(_ batches: [BatchRecord], _ column: KeyPath<EventRows.Row, Int64>) {
        self.batches = batches
        self.column = column
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        writeArrayHeader(count: batches.reduce(0) { $0 + $1.rows.count }, elementType: .int8, into: &buffer)
        for batch in batches {
            for row in batch.rows.rows {
                buffer.writeInteger(8, as: Int32.self)
                buffer.writeInteger(row[keyPath: column])
            }
        }
    }
}

/// The header of a one-dimensional binary array; an empty array has no dimension. `count` fits an `Int32`: a group
/// holds at most `--group-events` (at most 1,000,000) events, or one batch of at most 1,000,000 records.
private func writeArrayHeader(count: Int, elementType: PostgresDataType, into buffer: inout ByteBuffer) {
    buffer.writeInteger(count == 0 ? 0 : 1, as: Int32.self)  // dimensions
    buffer.writeInteger(1, as: Int32.self)  // may hold NULLs
    buffer.writeInteger(elementType.rawValue)
    guard count > 0 else { return }
    buffer.writeInteger(Int32(count))
    buffer.writeInteger(1, as: Int32.self)  // lower bound
}
