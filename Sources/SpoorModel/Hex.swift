/// `value` in lower-case hexadecimal, padded with zeros to `digits` digits: how ids, batch ids and file
/// names write numbers.
package func hex(_ value: UInt64, digits: Int = 16) -> String {
    let text = String(value, radix: 16)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}
