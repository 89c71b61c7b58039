public import SpoorModel

/// Preset and super properties of the two realistic workloads, with the names and the kind of
/// values the Sensors SDKs (and Spoor's tracker) record.
public enum WorkloadPresets {
    /// An iPhone app: device, OS, app, screen and network presets (17).
    public static let iPhone: Properties = [
        "$os": "iOS", "$os_version": "17.5.1", "$model": "iPhone15,2", "$manufacturer": "Apple", "$brand": "Apple",
        "$app_version": "5.12.0", "$app_name": "Leafline Tea", "$app_id": "com.leafline.tea",
        "$screen_width": 393, "$screen_height": 852, "$carrier": "T-Mobile", "$network_type": "WIFI", "$wifi": true,
        "$timezone_offset": -60, "$device_id": "8A3E6C1F-2B9D-4E07-A5C4-7F1D0B6E9A23",
        "$lib": "iOS", "$lib_version": "4.5.0",
    ]

    /// The super properties the app registers once the user is known.
    public static let iPhoneSuper: Properties = [
        "member_level": "gold", "ab_group": "checkout-v2", "channel": "app_store", "$is_first_day": false,
    ]

    /// A Linux service in a data centre (13).
    public static let linuxServer: Properties = [
        "$os": "Linux", "$os_version": "6.8.0-45-generic", "$model": "x86_64", "$manufacturer": "QEMU",
        "$app_version": "2.14.3", "$app_name": "checkout-api", "$timezone_offset": 0,
        "$device_id": "3c1f0e9a7b2d4c58a6e1f0b9d8c7a6e5", "$lib": "Linux", "$lib_version": "0.1.0",
        "hostname": "checkout-api-7d9f8b6c4-x2k4p", "region": "eu-west-1", "deployment": "blue",
    ]

    /// The service's super properties.
    public static let linuxServerSuper: Properties = ["environment": "production", "build": "2026.11.20-3"]
}
