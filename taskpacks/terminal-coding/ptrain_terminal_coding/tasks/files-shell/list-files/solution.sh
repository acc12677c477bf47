ls /workspace/src > /workspace/listing.txt
