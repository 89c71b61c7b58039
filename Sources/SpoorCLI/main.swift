print("spoor")
