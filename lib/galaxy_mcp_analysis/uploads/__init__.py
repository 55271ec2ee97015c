"""Local files into Galaxy through one-time upload URLs (``create_upload_url``): the route and its one-use record."""
