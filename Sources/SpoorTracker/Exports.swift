// An app imports SpoorTracker alone: the types the tracker's API takes and returns (events and property values,
// durability and codecs, upload policies and clients) come with it, the way swift-nio's `NIO` brings `NIOCore`.
@_exported public import SpoorModel
@_exported public import SpoorWire
@_exported public import SpoorLog
@_exported public import SpoorUpload
