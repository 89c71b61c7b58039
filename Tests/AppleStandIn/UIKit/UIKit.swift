// The stand-in for the SDK's UIKit Swift overlay: the index path API UIKit adds for its lists, which the
// auto-capture glue uses, with the SDK's signatures. Declarations only: every body traps.
@_exported import Foundation
@_exported import UIKit

extension IndexPath {
    public init(item: Int, section: Int) { fatalError() }
    public var section: Int { fatalError() }
    public var item: Int { fatalError() }
}
