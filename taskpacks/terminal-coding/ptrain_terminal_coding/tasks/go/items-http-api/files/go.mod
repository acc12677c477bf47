module example.com/itemsd

go 1.19
