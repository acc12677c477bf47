def login(user, password):
    raise NotImplementedError
