// Stand-in for <objc/runtime.h>, <objc/NSObject.h> and <objc/message.h>: only what the auto-capture glue
// (Sources/SpoorAutoCapture) uses, transcribed from the iOS SDK's declarations (types, nullability,
// selectors). Nothing here runs: scripts/typecheck-apple-glue only type-checks against it.
#pragma once

typedef signed char BOOL;
typedef struct objc_class *Class;
typedef struct objc_object { Class _Nonnull isa; } *id;
typedef struct objc_selector *SEL;
typedef struct objc_method *Method;
// The SDK declares IMP with old-style dispatch prototypes for Swift, which imports it as OpaquePointer.
typedef id _Nullable (*IMP)(id _Nonnull, SEL _Nonnull, ...);
typedef unsigned long NSUInteger;
typedef long NSInteger;

// <objc/NSObject.h> is not audited for nullability: Swift sees `responds(to: Selector!)` and
// `perform(_: Selector!) -> Unmanaged<AnyObject>!`.
@protocol NSObject
- (BOOL)respondsToSelector:(SEL)aSelector;
- (id)performSelector:(SEL)aSelector;
@end

__attribute__((objc_root_class))
@interface NSObject <NSObject>
- (instancetype)init;
@end

#pragma clang assume_nonnull begin

Class _Nullable object_getClass(id _Nullable obj);
Class _Nullable class_getSuperclass(Class _Nullable cls);
Method _Nullable class_getInstanceMethod(Class _Nullable cls, SEL _Nonnull name);
IMP _Nonnull method_getImplementation(Method _Nonnull m);
const char * _Nullable method_getTypeEncoding(Method _Nonnull m);
BOOL class_addMethod(Class _Nullable cls, SEL _Nonnull name, IMP _Nonnull imp, const char * _Nullable types);
IMP _Nullable class_replaceMethod(Class _Nullable cls, SEL _Nonnull name, IMP _Nonnull imp, const char * _Nullable types);
IMP _Nonnull imp_implementationWithBlock(id _Nonnull block);
BOOL imp_removeBlock(IMP _Nonnull anImp);

#pragma clang assume_nonnull end
