// An app imports SpoorTracker alone, and sees what it calls: the tracker and its configuration (this module), the
// event model (all of SpoorModel), and from the modules below only the types the tracker's API takes and returns
// (docs/public-api.md lists them). The log's and the uploader's machinery (`EventLog`, `Uploader`, frame codecs…)
// stay in their own modules: a program that wants them (the `spoor` command, the benchmarks) imports SpoorLog,
// SpoorUpload or SpoorWire by name. `scripts/check-public-api` fails when this surface changes unlisted.
@_exported public import SpoorModel

// SpoorWire: how batches are compressed, and the id a flush result names.
@_exported public import enum SpoorWire.Codec
@_exported public import struct SpoorWire.BatchID

// SpoorLog: durability, the storage error the tracker's calls throw, the bound of the rejected folder.
@_exported public import enum SpoorLog.Durability
@_exported public import struct SpoorLog.StorageError
@_exported public import struct SpoorLog.RejectedAreaLimits

// SpoorUpload: what an app plugs into the uploader (its HTTP client, network monitor, policy, backoff) and
// the counters, results and upload attempts it reads.
@_exported public import protocol SpoorUpload.HTTPTransportClient
@_exported public import struct SpoorUpload.HTTPRequest
@_exported public import struct SpoorUpload.HTTPResponse
@_exported public import struct SpoorUpload.HTTPClientError
@_exported public import struct SpoorUpload.URLSessionHTTPClient
@_exported public import protocol SpoorUpload.NetworkMonitor
@_exported public import struct SpoorUpload.NetworkStatus
#if canImport(Network)
@_exported public import class SpoorUpload.PathNetworkMonitor
#endif
@_exported public import struct SpoorUpload.UploadPolicy
@_exported public import struct SpoorUpload.Backoff
@_exported public import struct SpoorUpload.UploadCounters
@_exported public import enum SpoorUpload.UploadState
@_exported public import enum SpoorUpload.PendingReason
@_exported public import struct SpoorUpload.UploadResult
@_exported public import struct SpoorUpload.UploadAttempt
