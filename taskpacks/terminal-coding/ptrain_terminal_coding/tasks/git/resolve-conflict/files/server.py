import settings

print(f"serving on {settings.HOST}:{settings.PORT}")
