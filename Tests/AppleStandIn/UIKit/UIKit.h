// Stand-in for the iOS SDK's UIKit headers: only the classes, methods and properties the auto-capture glue
// (Sources/SpoorAutoCapture/UIKitHooks.swift) uses, transcribed with the SDK's types, nullability, main-actor
// isolation (NS_SWIFT_UI_ACTOR), Swift names and availability. Swift derives the same names from these
// selectors as from the SDK's (`cellForRowAtIndexPath:` is `cellForRow(at:)`). Declarations only.
#pragma once
#import <Foundation/Foundation.h>

#pragma clang assume_nonnull begin

@class UIView, UIViewController, UINavigationController, UITableViewCell, UICollectionViewCell, UIGestureRecognizer;

NS_SWIFT_UI_ACTOR
@interface UIResponder : NSObject
@property (nonatomic, readonly, nullable) UIResponder *nextResponder NS_SWIFT_NAME(next);
@end

NS_SWIFT_UI_ACTOR
@interface UIView : UIResponder
@property (nullable, nonatomic, readonly) UIView *superview;
@property (nonatomic, readonly, copy) NSArray<__kindof UIView *> *subviews;
@property (nonatomic, getter=isHidden) BOOL hidden;
@property (nullable, nonatomic, copy) NSString *accessibilityIdentifier;
- (void)layoutIfNeeded;
@end

NS_SWIFT_UI_ACTOR
@interface UILabel : UIView
@property (nullable, nonatomic, copy) NSString *text;
@end

NS_SWIFT_UI_ACTOR
@interface UIMenuElement : NSObject
@end

NS_SWIFT_UI_ACTOR API_AVAILABLE_IOS(13.0)
@interface UIAction : UIMenuElement
@end

NS_SWIFT_UI_ACTOR
@interface UIControl : UIView
@property (nonatomic, readonly, getter=isTracking) BOOL tracking;
- (void)sendAction:(UIAction *)action NS_SWIFT_NAME(sendAction(_:)) API_AVAILABLE_IOS(14.0);  // named so by UIKit.apinotes
@end

// A struct in Swift (UIKit's overlay bridges it); its `title` reads the same either way.
NS_SWIFT_UI_ACTOR NS_SWIFT_NAME(UIButton.Configuration) API_AVAILABLE_IOS(15.0)
@interface UIButtonConfiguration : NSObject
@property (nullable, nonatomic, copy) NSString *title;
@end

NS_SWIFT_UI_ACTOR
@interface UIButton : UIControl
@property (nullable, nonatomic, readonly, strong) NSString *currentTitle;
@property (nullable, nonatomic, copy) UIButtonConfiguration *configuration API_AVAILABLE_IOS(15.0);
@end

NS_SWIFT_UI_ACTOR
@interface UISwitch : UIControl
@property (nonatomic, getter=isOn) BOOL on;
@end

NS_SWIFT_UI_ACTOR
@interface UIStepper : UIControl
@property (nonatomic) double value;
@end

NS_SWIFT_UI_ACTOR
@interface UISlider : UIControl
@property (nonatomic) float value;
@end

NS_SWIFT_UI_ACTOR
@interface UIPageControl : UIControl
@property (nonatomic) NSInteger currentPage;
@end

NS_SWIFT_UI_ACTOR
@interface UISegmentedControl : UIControl
@property (nonatomic, readonly) NSUInteger numberOfSegments;
@property (nonatomic) NSInteger selectedSegmentIndex;
- (nullable NSString *)titleForSegmentAtIndex:(NSUInteger)segment;
@end

NS_SWIFT_UI_ACTOR
@interface UIScrollView : UIView
@end

NS_SWIFT_UI_ACTOR
@interface UITableViewCell : UIView
@end

NS_SWIFT_UI_ACTOR
@interface UICollectionViewCell : UIView
@end

@class UITableView, UICollectionView;

NS_SWIFT_UI_ACTOR
@protocol UIScrollViewDelegate <NSObject>
@end

NS_SWIFT_UI_ACTOR
@protocol UITableViewDelegate <UIScrollViewDelegate>
@optional
- (void)tableView:(UITableView *)tableView didSelectRowAtIndexPath:(NSIndexPath *)indexPath;
@end

NS_SWIFT_UI_ACTOR
@protocol UICollectionViewDelegate <UIScrollViewDelegate>
@optional
- (void)collectionView:(UICollectionView *)collectionView didSelectItemAtIndexPath:(NSIndexPath *)indexPath;
@end

NS_SWIFT_UI_ACTOR
@interface UITableView : UIScrollView
@property (nonatomic, weak, nullable) id<UITableViewDelegate> delegate;
- (nullable NSIndexPath *)indexPathForCell:(UITableViewCell *)cell;
- (nullable __kindof UITableViewCell *)cellForRowAtIndexPath:(NSIndexPath *)indexPath;
@end

NS_SWIFT_UI_ACTOR
@interface UICollectionView : UIScrollView
@property (nonatomic, weak, nullable) id<UICollectionViewDelegate> delegate;
- (nullable NSIndexPath *)indexPathForCell:(UICollectionViewCell *)cell;
- (nullable __kindof UICollectionViewCell *)cellForItemAtIndexPath:(NSIndexPath *)indexPath;
@end

NS_SWIFT_UI_ACTOR
@interface UINavigationItem : NSObject
@property (nullable, nonatomic, copy) NSString *title;
@property (nullable, nonatomic, strong) UIView *titleView;
@end

NS_SWIFT_UI_ACTOR
@interface UIViewController : UIResponder
@property (nullable, nonatomic, copy) NSString *title;
@property (nullable, nonatomic, weak, readonly) UIViewController *parentViewController NS_SWIFT_NAME(parent);
@property (nonatomic, readonly, strong) UINavigationItem *navigationItem;
- (void)viewDidAppear:(BOOL)animated;
- (void)viewDidDisappear:(BOOL)animated;
@end

NS_SWIFT_UI_ACTOR
@interface UINavigationController : UIViewController
@property (nullable, nonatomic, readonly, strong) UIViewController *topViewController;
@end

NS_SWIFT_UI_ACTOR
@interface UITabBarController : UIViewController
@property (nullable, nonatomic, assign) __kindof UIViewController *selectedViewController;
@end

NS_SWIFT_UI_ACTOR
@interface UIPageViewController : UIViewController
@property (nullable, nonatomic, readonly) NSArray<__kindof UIViewController *> *viewControllers;
@end

NS_SWIFT_UI_ACTOR
@interface UIBarItem : NSObject
@end

typedef NS_ENUM(NSInteger, UIEventType) {
    UIEventTypeTouches,
    UIEventTypeMotion,
    UIEventTypeRemoteControl,
    UIEventTypePresses,
} NS_SWIFT_NAME(UIEvent.EventType);

typedef NS_ENUM(NSInteger, UITouchPhase) {
    UITouchPhaseBegan,
    UITouchPhaseMoved,
    UITouchPhaseStationary,
    UITouchPhaseEnded,
    UITouchPhaseCancelled,
} NS_SWIFT_NAME(UITouch.Phase);

NS_SWIFT_UI_ACTOR
@interface UITouch : NSObject
@property (nonatomic, readonly) UITouchPhase phase;
@end

NS_SWIFT_UI_ACTOR
@interface UIEvent : NSObject
@property (nonatomic, readonly) UIEventType type;
@property (nonatomic, readonly, nullable) NSSet<UITouch *> *allTouches;
@end

NS_SWIFT_UI_ACTOR
@interface UIApplication : UIResponder
@end

typedef NS_ENUM(NSInteger, UIGestureRecognizerState) {
    UIGestureRecognizerStatePossible,
    UIGestureRecognizerStateBegan,
    UIGestureRecognizerStateChanged,
    UIGestureRecognizerStateEnded,
    UIGestureRecognizerStateCancelled,
    UIGestureRecognizerStateFailed,
    UIGestureRecognizerStateRecognized = UIGestureRecognizerStateEnded
} NS_SWIFT_NAME(UIGestureRecognizer.State);

NS_SWIFT_UI_ACTOR
@interface UIGestureRecognizer : NSObject
- (instancetype)initWithTarget:(nullable id)target action:(nullable SEL)action NS_DESIGNATED_INITIALIZER;
- (void)addTarget:(id)target action:(SEL)action;
- (void)removeTarget:(nullable id)target action:(nullable SEL)action;
@property (nonatomic, readonly) UIGestureRecognizerState state;
@property (nullable, nonatomic, readonly) UIView *view;
@end

#pragma clang assume_nonnull end
