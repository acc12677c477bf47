jq -r .version /workspace/package.json > /workspace/version.txt
