// Stand-in for the iOS SDK's Foundation headers: only what the auto-capture glue (Sources/SpoorAutoCapture)
// uses, transcribed with the SDK's types, nullability and Swift names. Where the SDK renames or bridges a
// class through Foundation.apinotes (NSThread is `Thread`, NSString is `String`, NSIndexPath is
// `IndexPath`), the same is said here with the equivalent attribute. Declarations only: nothing here runs.
#pragma once
#import <ObjectiveC/ObjectiveC.h>

#define NS_SWIFT_NAME(_name) __attribute__((swift_name(#_name)))
#define NS_SWIFT_UI_ACTOR __attribute__((swift_attr("@UIActor")))
#define NS_DESIGNATED_INITIALIZER __attribute__((objc_designated_initializer))
#define NS_ENUM(_type, _name) enum __attribute__((enum_extensibility(open))) _name : _type _name; \
    enum __attribute__((enum_extensibility(open))) _name : _type
#define API_AVAILABLE_IOS(_version) __attribute__((availability(ios, introduced=_version)))

#pragma clang assume_nonnull begin

__attribute__((swift_bridge("Swift.String")))
@interface NSString : NSObject
@end

__attribute__((swift_bridge("Swift.Array")))
@interface NSArray<__covariant ObjectType> : NSObject
@end

__attribute__((swift_bridge("Swift.Set")))
@interface NSSet<__covariant ObjectType> : NSObject
@end

__attribute__((swift_bridge("IndexPath")))
@interface NSIndexPath : NSObject
@end

NS_SWIFT_NAME(Thread)
@interface NSThread : NSObject
@property (class, readonly) BOOL isMainThread;
@end

NSString *NSStringFromSelector(SEL aSelector);
SEL NSSelectorFromString(NSString *aSelectorName);
NSString *NSStringFromClass(Class aClass);

#pragma clang assume_nonnull end
