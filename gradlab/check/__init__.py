"""The tensor gradient check: autograd against finite differences on a user's function and inputs."""
